// Settings → Appearance: the theme.

import type { ThemeChoice } from "../../lib/theme";
import { Section } from "./Section";

export function Appearance({ theme, onTheme }: { theme: ThemeChoice; onTheme: (t: ThemeChoice) => void }) {
  return (
    <Section title="Appearance" id="s-appearance">
      <label className="field inline">
        <span>Theme</span>
        <select data-testid="theme-select" value={theme} onChange={(e) => onTheme(e.target.value as ThemeChoice)}>
          <option value="system">Follow the system</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
      </label>
    </Section>
  );
}
