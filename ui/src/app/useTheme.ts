// The theme (light, dark, or following the system): applied to the page, remembered, and
// re-applied when the system's preference changes while "system" is chosen.

import { useEffect, useState } from "react";
import { applyTheme, loadTheme, saveTheme, type ThemeChoice } from "../lib/theme";

export function useTheme() {
  const [theme, setTheme] = useState<ThemeChoice>(loadTheme);
  useEffect(() => {
    applyTheme(theme);
    saveTheme(theme);
    if (theme !== "system" || typeof matchMedia !== "function") return;
    const mq = matchMedia("(prefers-color-scheme: dark)");
    const on = () => applyTheme("system");
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [theme]);
  return { theme, setTheme };
}
