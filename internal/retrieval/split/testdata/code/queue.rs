//! A bounded queue that drops the oldest item when full.

use std::collections::VecDeque;

const DEFAULT_CAPACITY: usize = 64;

/// A queue of at most `capacity` items.
pub struct Ring<T> {
    items: VecDeque<T>,
    capacity: usize,
    dropped: u64,
}

impl<T> Ring<T> {
    /// Creates an empty ring; a zero capacity takes the default.
    pub fn new(capacity: usize) -> Self {
        let capacity = if capacity == 0 { DEFAULT_CAPACITY } else { capacity };
        Ring { items: VecDeque::with_capacity(capacity), capacity, dropped: 0 }
    }

    /// Pushes an item, dropping the oldest when full.
    pub fn push(&mut self, item: T) {
        if self.items.len() == self.capacity {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(item);
    }

    pub fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }
}

fn drain_all<T: std::fmt::Debug>(ring: &mut Ring<T>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(item) = ring.pop() {
        out.push(format!("{:?}", item));
    }
    out
}

fn main() {
    let mut ring = Ring::new(3);
    for i in 0..5 {
        ring.push(i);
    }
    match ring.dropped {
        0 => println!("nothing dropped"),
        n => println!("dropped {}", n),
    }
    loop {
        let rest = drain_all(&mut ring);
        if rest.is_empty() {
            break;
        }
        println!("{}", rest.join(","));
    }
}
