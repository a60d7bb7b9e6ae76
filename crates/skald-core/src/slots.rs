//! How many agents' turns this process runs at once (config.toml `[agent] at_once`,
//! docs/board.md, "Agents at once"): a turn beyond it waits for a place, first come first
//! served, and says so. Each agent works its own way to the model and its own commands,
//! so a person running several on one machine or one rate-limited key chooses how many.
//!
//! Counted per process: the app and `skald serve` run a person's agents; a `skald exec`
//! is one agent of its own.

use std::collections::VecDeque;
use std::sync::Mutex;
use tokio::sync::Notify;

use skald_api::CancellationToken;
use skald_base::lock;

/// The default of `[agent] at_once`.
pub const DEFAULT_AT_ONCE: usize = 4;

#[derive(Debug)]
pub struct Slots {
    state: Mutex<State>,
    /// Woken when a place frees, the limit changes or a waiter leaves.
    changed: Notify,
}

#[derive(Debug)]
struct State {
    /// 0: no limit.
    limit: usize,
    running: usize,
    /// The waiting turns' tickets, in the order they came.
    queue: VecDeque<u64>,
    next_ticket: u64,
}

/// A turn's place; given back when dropped.
#[derive(Debug)]
pub struct Slot<'a> {
    slots: &'a Slots,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut s = lock(&self.slots.state);
        s.running = s.running.saturating_sub(1);
        drop(s);
        self.slots.changed.notify_waiters();
    }
}

impl Default for Slots {
    fn default() -> Self {
        Slots::new(DEFAULT_AT_ONCE)
    }
}

impl Slots {
    /// At most `limit` turns at once; 0 is no limit.
    pub fn new(limit: usize) -> Slots {
        Slots {
            state: Mutex::new(State {
                limit,
                running: 0,
                queue: VecDeque::new(),
                next_ticket: 0,
            }),
            changed: Notify::new(),
        }
    }

    pub fn limit(&self) -> usize {
        lock(&self.state).limit
    }

    /// Changes the limit; waiting turns that now fit start.
    pub fn set_limit(&self, limit: usize) {
        lock(&self.state).limit = limit;
        self.changed.notify_waiters();
    }

    /// Turns waiting for a place now.
    pub fn waiting(&self) -> usize {
        lock(&self.state).queue.len()
    }

    /// A place now, if one is free and nobody waits for it.
    pub fn try_take(&self) -> Option<Slot<'_>> {
        let mut s = lock(&self.state);
        if s.queue.is_empty() && (s.limit == 0 || s.running < s.limit) {
            s.running += 1;
            Some(Slot { slots: self })
        } else {
            None
        }
    }

    /// Waits in line for a place; None when `cancel` fires first. `moved` is told how
    /// many wait before this turn whenever that number changes.
    pub async fn take(
        &self,
        cancel: &CancellationToken,
        moved: impl Fn(usize),
    ) -> Option<Slot<'_>> {
        let ticket = {
            let mut s = lock(&self.state);
            let t = s.next_ticket;
            s.next_ticket += 1;
            s.queue.push_back(t);
            t
        };
        // Leaves the line however this future ends (dropped, cancelled).
        let mut in_line = InLine {
            slots: self,
            ticket,
            done: false,
        };
        let mut told: Option<usize> = None;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut s = lock(&self.state);
                let ahead = s.queue.iter().position(|t| *t == ticket).unwrap_or(0);
                if told.is_some_and(|t| t != ahead) {
                    moved(ahead);
                }
                told = Some(ahead);
                if s.queue.front() == Some(&ticket) && (s.limit == 0 || s.running < s.limit) {
                    s.queue.pop_front();
                    s.running += 1;
                    in_line.done = true;
                    drop(s);
                    // The next in line may fit too (a raised limit).
                    self.changed.notify_waiters();
                    return Some(Slot { slots: self });
                }
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }
}

/// A ticket in the line, taken out of it unless it got its place.
struct InLine<'a> {
    slots: &'a Slots,
    ticket: u64,
    done: bool,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        lock(&self.slots.state).queue.retain(|t| *t != self.ticket);
        self.slots.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn turns_beyond_the_limit_wait_in_the_order_they_came() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.try_take().unwrap();
        assert!(slots.try_take().is_none());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for n in 0..3 {
            let (mine, order) = (slots.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                let slot = mine.take(&CancellationToken::new(), |_| {}).await.unwrap();
                lock(&order).push(n);
                tokio::task::yield_now().await;
                drop(slot);
            }));
            // Each is in line before the next comes.
            while slots.waiting() < n + 1 {
                tokio::task::yield_now().await;
            }
        }
        drop(first);
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*lock(&order), vec![0, 1, 2]);
        assert_eq!(slots.waiting(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_the_line_and_a_raised_limit_lets_the_next_in() {
        let slots = Arc::new(Slots::new(1));
        let _first = slots.try_take().unwrap();
        let cancel = CancellationToken::new();
        let (s, c) = (slots.clone(), cancel.clone());
        let gone = tokio::spawn(async move { s.take(&c, |_| {}).await.is_none() });
        while slots.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        let s = slots.clone();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let told = seen.clone();
        let next = tokio::spawn(async move {
            s.take(&CancellationToken::new(), move |n| lock(&told).push(n))
                .await
                .is_some()
        });
        while slots.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
        assert!(gone.await.unwrap());
        // The one behind is told it moved up.
        while lock(&seen).is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(*lock(&seen), vec![0]);
        slots.set_limit(2);
        assert!(next.await.unwrap());
        assert_eq!(slots.waiting(), 0);
    }
}
