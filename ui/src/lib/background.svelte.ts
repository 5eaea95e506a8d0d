// Background mode in the window: whether new dispatches are paused, the
// close question the backend asks when the window is closed while routes
// wait ("Keep Recourse running in the tray while routes wait?"), the
// remembered answer, and start at login (the autostart plugin).
import { enable, disable, isEnabled } from "@tauri-apps/plugin-autostart";
import { commands, events } from "../bindings";
import type { CloseChoice, CloseQuestion, Settings } from "./types";
import { AppError, call, messageOf } from "./api";

let paused = $state(false);
let question = $state<CloseQuestion | null>(null);
let closeChoice = $state<CloseChoice | null>(null);
let autostart = $state<boolean | null>(null);
let error = $state("");
/** The app's settings as last read or saved; null until read. */
let settings = $state<Settings | null>(null);
/** The settings save in flight, which the next one waits for. */
let saving: Promise<unknown> = Promise.resolve();

export const background = {
  get paused() {
    return paused;
  },
  /** The pending close question, or null. */
  get question() {
    return question;
  },
  /** The remembered answer; null: ask each time. */
  get closeChoice() {
    return closeChoice;
  },
  /** Whether Recourse starts at login; null until known. */
  get autostart() {
    return autostart;
  },
  get error() {
    return error;
  },
  get settings() {
    return settings;
  },
  /**
   * Saves the settings changed by `change`; the backend checks them first.
   * Resolves to whether they were saved and the field errors by path.
   */
  saveSettings(change: (s: Settings) => Settings): Promise<{ saved: boolean; errors: Record<string, string> }> {
    // One save at a time, each applied to what the one before saved: two
    // quick edits would otherwise each send the settings without the other.
    const run = saving.then(async () => {
      if (!settings) return { saved: false, errors: {} };
      error = "";
      try {
        settings = await call(commands.setSettings(change($state.snapshot(settings) as Settings)));
        return { saved: true, errors: {} };
      } catch (err) {
        if (err instanceof AppError && err.fields.length > 0) return { saved: false, errors: err.byField() };
        error = messageOf(err);
        return { saved: false, errors: {} };
      }
    });
    saving = run;
    return run;
  },
  async load() {
    try {
      settings = await commands.getSettings();
      closeChoice = settings.close_while_active ?? null;
      // Waits for the engine to open.
      paused = await call(commands.dispatchPaused());
    } catch (err) {
      error = messageOf(err);
    }
  },
  async loadAutostart() {
    try {
      autostart = await isEnabled();
    } catch (err) {
      error = messageOf(err);
    }
  },
  /** Listens for pause changes and close questions; returns the unlisten function. */
  async listen(): Promise<() => void> {
    const a = await events.pauseChanged.listen((e) => {
      paused = e.payload.paused;
    });
    const b = await events.closeRequested.listen((e) => {
      question = e.payload;
    });
    return () => {
      a();
      b();
    };
  },
  /** Resolves to whether it was saved. */
  async setPaused(next: boolean): Promise<boolean> {
    error = "";
    try {
      paused = await call(commands.setDispatchPaused(next));
      return true;
    } catch (err) {
      error = messageOf(err);
      return false;
    }
  },
  async answer(choice: CloseChoice, remember: boolean) {
    error = "";
    question = null;
    if (remember) closeChoice = choice;
    try {
      await call(commands.answerClose(choice, remember));
    } catch (err) {
      error = messageOf(err);
    }
  },
  dismiss() {
    question = null;
  },
  /** Resolves to whether it was saved. */
  async setCloseChoice(choice: CloseChoice | null): Promise<boolean> {
    error = "";
    try {
      settings = await call(commands.setCloseChoice(choice));
      closeChoice = settings.close_while_active ?? null;
      return true;
    } catch (err) {
      error = messageOf(err);
      return false;
    }
  },
  /** Resolves to whether it was saved. */
  async setAutostart(on: boolean): Promise<boolean> {
    error = "";
    try {
      if (on) await enable();
      else await disable();
      autostart = await isEnabled();
      return true;
    } catch (err) {
      error = messageOf(err);
      autostart = await isEnabled().catch(() => autostart);
      return false;
    }
  },
};
