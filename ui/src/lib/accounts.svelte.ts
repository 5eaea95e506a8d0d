// The Accounts area's state: every account with its limit marks, routes and
// last 24 hours, as the backend reads them; reloaded after route changes and
// new marks (a burst of events makes one request), cleared by a person, and
// the global maximum of running agents.
import { commands, events } from "../bindings";
import type { AccountsOverview } from "./types";
import { call, messageOf } from "./api";
import { navigation } from "./navigation.svelte";

let overview = $state<AccountsOverview | null>(null);
let error = $state<string | null>(null);
let reloadTimer: ReturnType<typeof setTimeout> | undefined;

function reloadSoon() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => void accounts.load(), 300);
}

export const accounts = {
  get overview() {
    return overview;
  },
  get error() {
    return error;
  },

  async load(): Promise<void> {
    try {
      overview = await call(commands.accounts());
      error = null;
    } catch (err) {
      error = `Could not load the accounts: ${messageOf(err)}`;
    }
  },

  /** Reloads on route changes and new marks; returns the unlisten function. */
  async listen(): Promise<() => void> {
    const changed = await events.routeChanged.listen(reloadSoon);
    const marked = await events.accountMarked.listen(reloadSoon);
    return () => {
      clearTimeout(reloadTimer);
      changed();
      marked();
    };
  },

  /** Removes every limit mark of account `id`; throws the backend's error. */
  async clear(id: string, name: string): Promise<void> {
    const cleared = await call(commands.clearAccount(id));
    navigation.announce(`${name}: ${cleared} limit mark${cleared === 1 ? "" : "s"} cleared`);
    await accounts.load();
  },

  /** Sets the global maximum of running agents (null: none); throws the backend's error. */
  async setMaxRunning(max: number | null): Promise<void> {
    await call(commands.setMaxRunning(max));
    await accounts.load();
  },
};
