// The unsaved profile edits the window holds, if any: what the close
// question offers to save or discard. The backend is told the profile's
// name, so that closing the window or quitting from the tray asks first.
import { commands } from "../bindings";

export type PendingEdits = {
  /** The profile being edited. */
  profile: string;
  /** Saves the draft; false when refused (its errors are shown in the editor). */
  save: () => Promise<boolean>;
  discard: () => void;
};

let pending = $state<PendingEdits | null>(null);
/** What the backend was last told; plain, so callers' effects do not track it. */
let reported: string | null = null;

export const pendingEdits = {
  get current() {
    return pending;
  },
  /** The editor reports its edits (null: all saved, or the editor is gone). */
  set(next: PendingEdits | null) {
    pending = next;
    const profile = next?.profile ?? null;
    if (profile === reported) return;
    reported = profile;
    void commands.setUnsavedEdits(profile);
  },
};
