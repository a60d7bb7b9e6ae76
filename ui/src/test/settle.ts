// Lets replies land and what they set render: a few turns of the event loop, inside act().

import { act } from "react";

export async function settle(rounds = 5) {
  for (let i = 0; i < rounds; i++) {
    await act(async () => {
      await new Promise((r) => setTimeout(r, 0));
    });
  }
}
