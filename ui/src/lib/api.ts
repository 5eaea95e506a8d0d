// One way to call the backend: typed commands from the generated bindings,
// with failures turned into a thrown `AppError` carrying the IPC error shape.
import type { IpcError_Serialize } from "../bindings";

export class AppError extends Error {
  readonly code: IpcError_Serialize["code"];
  readonly field: string | null;
  constructor(err: IpcError_Serialize) {
    super(err.message);
    this.code = err.code;
    this.field = err.field;
  }
}

type Reply<T> = { status: "ok"; data: T } | { status: "error"; error: IpcError_Serialize };

/** Resolves to the command's data or throws an `AppError`. */
export async function call<T>(reply: Promise<Reply<T>>): Promise<T> {
  const r = await reply;
  if (r.status === "error") throw new AppError(r.error);
  return r.data;
}

/** A readable message for anything thrown. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  return "Something went wrong.";
}
