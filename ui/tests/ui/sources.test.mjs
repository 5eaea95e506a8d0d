// Rules about the UI's own source, read as text: it names backend types
// only through lib/types.ts, so no generated `_Serialize` name leaks in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const src = new URL("../../src/", import.meta.url).pathname;
const UI_FILES = readdirSync(src, { recursive: true })
  .filter((f) => /\.(ts|svelte)$/.test(f) && !["bindings.ts", join("lib", "types.ts")].includes(f))
  .map((f) => join(src, f));

test("UI code imports backend types only from lib/types.ts, by their clean names", () => {
  const offenders = UI_FILES.flatMap((file) => {
    const text = readFileSync(file, "utf8");
    const problems = [];
    if (/\w+_(Serialize|Deserialize)\b/.test(text)) problems.push("names a direction-suffixed type");
    if (
      /import\s+type[^;]*from\s+"[./]*bindings"/.test(text) ||
      /import\s*\{[^}]*\btype\s[^}]*\}\s*from\s+"[./]*bindings"/.test(text)
    ) {
      problems.push("imports a type from the bindings");
    }
    return problems.map((p) => `${relative(src, file)}: ${p}`);
  });
  assert.ok(UI_FILES.length > 20, "the walk found the UI's files");
  assert.deepEqual(offenders, []);
});
