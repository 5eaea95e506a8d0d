import { commands } from "../bindings";
import { call } from "./api";
import type { PathRequest } from "./types";

/** What Import and Export offer to pick. */
export const PROFILE_FILES = [{ name: "Recourse profile", extensions: ["json"] }];

/**
 * Shows a native file or folder chooser, in its own process so it cannot
 * disturb the database (see src-tauri/src/chooser.rs); the chosen path, or
 * null when the person cancelled.
 */
export function choosePath(
  request: Pick<PathRequest, "kind" | "title"> & Partial<PathRequest>,
): Promise<string | null> {
  return call(commands.choosePath({ start_in: null, file_name: null, filters: [], ...request }));
}
