// Light or dark: follows the system (prefers-color-scheme) unless the person
// picked one in Settings; the pick is remembered in this window's storage.
// Sets data-theme on <html>, which app.css keys its colours on, and the
// window's own theme, which native drop-down menus (GTK) follow.
import { getCurrentWindow } from "@tauri-apps/api/window";

export type ThemeChoice = "system" | "light" | "dark";

const KEY = "recourse.theme";
const CHOICES: readonly ThemeChoice[] = ["system", "light", "dark"];
const dark = window.matchMedia("(prefers-color-scheme: dark)");

function stored(): ThemeChoice {
  const value = localStorage.getItem(KEY);
  return (CHOICES as readonly (string | null)[]).includes(value) ? (value as ThemeChoice) : "system";
}

let choice = $state<ThemeChoice>(stored());

function apply() {
  const resolved = choice === "system" ? (dark.matches ? "dark" : "light") : choice;
  document.documentElement.dataset.theme = resolved;
  try {
    // Without it a <select>'s open list stays light in a dark window.
    void getCurrentWindow()
      .setTheme(resolved)
      .catch(() => {});
  } catch {
    // No window to theme (a page outside the app): the page itself is themed.
  }
}

export const theme = {
  get choice() {
    return choice;
  },
  /** Applies the remembered choice and follows system changes; call once, before mounting. */
  start() {
    apply();
    dark.addEventListener("change", apply);
  },
  set(next: ThemeChoice) {
    choice = next;
    localStorage.setItem(KEY, next);
    apply();
  },
};
