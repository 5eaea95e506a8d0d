// One way to call the backend: typed commands from the generated bindings,
// with failures turned into a thrown `AppError` carrying the IPC error shape.
import type { FieldError, IpcError } from "./types";

export class AppError extends Error {
  readonly code: IpcError["code"];
  /** Every field error of a validation error, each with its own path and message. */
  readonly fields: FieldError[];
  constructor(err: IpcError) {
    super(err.message);
    this.code = err.code;
    this.fields = err.fields;
  }

  /** The field errors by path, for showing each one at its field. */
  byField(): Record<string, string> {
    return Object.fromEntries(this.fields.map((f) => [f.path, f.message]));
  }
}

type Reply<T> = { status: "ok"; data: T } | { status: "error"; error: IpcError };

/**
 * Resolves to the command's data or throws an `AppError`. Tauri itself
 * rejects a request whose arguments do not deserialize with a bare string
 * ("invalid args `id` for command …"); that becomes a validation error so
 * the person still reads why.
 */
export async function call<T>(reply: Promise<Reply<T>>): Promise<T> {
  const r = await reply;
  if (r.status === "ok") return r.data;
  const error: unknown = r.error;
  if (typeof error === "string") throw new AppError({ code: "validation", message: error, fields: [] });
  throw new AppError(r.error);
}

/** A readable message for anything thrown. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  return "Something went wrong.";
}
