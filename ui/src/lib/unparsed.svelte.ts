// Fields that read their own text (whole numbers, durations) report text
// they cannot turn into a value here. The editor refuses to save while any
// field shows something other than what would be written, and counts such
// a field as an unsaved change.
import { getContext, setContext } from "svelte";
import { SvelteMap } from "svelte/reactivity";

export type Unparsed = { label: string; message: string };

const KEY = Symbol("unparsed-fields");
const PLACE = Symbol("field-place");

/**
 * Called by a part of the editor during init: the fields inside it are
 * named with `part` after the parts around it ("Candidate 2 “Codex” ›
 * Transient › Retries"), as the backend names the fields it refuses.
 */
export function placeFields(part: () => string) {
  const outer = getContext<(() => string) | undefined>(PLACE);
  setContext(PLACE, () => (outer ? `${outer()} › ${part()}` : part()));
}

export class UnparsedFields {
  /** By input id. */
  readonly errors = new SvelteMap<string, Unparsed>();
  /** Bumped by `reset`: fields then show the draft again. */
  generation = $state(0);

  /** After Discard: every field shows the draft's value again. */
  reset() {
    this.errors.clear();
    this.generation++;
  }
}

/** Called by the editor: the fields inside it report to this. */
export function provideUnparsed(): UnparsedFields {
  const fields = new UnparsedFields();
  setContext(KEY, fields);
  return fields;
}

/**
 * Called by a field during init: keeps `id`'s entry in step with its
 * current error (none outside an editor). Returns the editor's registry.
 */
export function reportUnparsed(id: () => string, label: () => string, error: () => string | undefined) {
  const fields = getContext<UnparsedFields | undefined>(KEY);
  const place = getContext<(() => string) | undefined>(PLACE);
  $effect(() => {
    const message = error();
    if (!fields || message === undefined) return;
    const key = id();
    fields.errors.set(key, { label: place ? `${place()} › ${label()}` : label(), message });
    return () => fields.errors.delete(key);
  });
  return fields;
}

/** The editor's registry, for a part that words what its fields say (none outside an editor). */
export function unparsedFields(): UnparsedFields | undefined {
  return getContext<UnparsedFields | undefined>(KEY);
}
