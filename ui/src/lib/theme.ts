// Light / dark / follow-the-OS, applied as a data attribute that the CSS variables key on.

export type ThemeChoice = "light" | "dark" | "system";
const KEY = "skald.theme";

export function loadTheme(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    if (v === "light" || v === "dark" || v === "system") return v;
  } catch {
    /* storage disabled */
  }
  return "system";
}

export function saveTheme(t: ThemeChoice) {
  try {
    localStorage.setItem(KEY, t);
  } catch {
    /* storage disabled */
  }
}

export function resolveTheme(t: ThemeChoice): "light" | "dark" {
  if (t !== "system") return t;
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function applyTheme(t: ThemeChoice) {
  document.documentElement.dataset.theme = resolveTheme(t);
}
