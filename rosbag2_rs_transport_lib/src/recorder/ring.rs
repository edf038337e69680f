//! A FIFO queue stored in chunks of bounded capacity, so that the memory a snapshot buffer holds
//! stays close to its content: a `VecDeque` doubles its capacity (up to 2x the entries in slack)
//! and never gives it back, while here a chunk is freed as soon as its last entry is evicted and
//! at most one chunk is partly empty at each end.

use std::collections::VecDeque;

/// Largest chunk, in entries.
const MAX_CHUNK: usize = 1024;
/// Smallest chunk, in entries (small topics stay small).
const MIN_CHUNK: usize = 8;

/// A FIFO queue in chunks.
#[derive(Debug)]
pub(crate) struct ChunkedQueue<T> {
    chunks: VecDeque<VecDeque<T>>,
    len: usize,
}

impl<T> Default for ChunkedQueue<T> {
    fn default() -> Self {
        Self {
            chunks: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T> ChunkedQueue<T> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an entry.
    pub fn push_back(&mut self, value: T) {
        let needs_chunk = self.chunks.back().is_none_or(|c| c.len() == c.capacity());
        if needs_chunk {
            let capacity = self.len.clamp(MIN_CHUNK, MAX_CHUNK);
            self.chunks.push_back(VecDeque::with_capacity(capacity));
        }
        if let Some(chunk) = self.chunks.back_mut() {
            chunk.push_back(value);
            self.len += 1;
        }
    }

    /// The oldest entry.
    pub fn front(&self) -> Option<&T> {
        self.chunks.front().and_then(VecDeque::front)
    }

    /// The newest entry.
    pub fn back(&self) -> Option<&T> {
        self.chunks.back().and_then(VecDeque::back)
    }

    /// Removes the oldest entry.
    pub fn pop_front(&mut self) -> Option<T> {
        let chunk = self.chunks.front_mut()?;
        let value = chunk.pop_front()?;
        self.len -= 1;
        if chunk.is_empty() && self.chunks.len() > 1 {
            self.chunks.pop_front();
        }
        Some(value)
    }

    /// All entries, oldest first.
    pub fn into_iter(self) -> impl Iterator<Item = T> {
        self.chunks.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_across_chunks() {
        let mut q = ChunkedQueue::default();
        for i in 0..5000 {
            q.push_back(i);
            if i % 3 == 0 {
                q.pop_front();
            }
        }
        let expected: Vec<i32> = (0..5000).skip(1667).collect();
        assert_eq!(q.len(), expected.len());
        assert_eq!(q.front(), expected.first());
        assert_eq!(q.back(), expected.last());
        assert_eq!(q.into_iter().collect::<Vec<_>>(), expected);
        let mut q = ChunkedQueue::default();
        q.push_back(1);
        assert_eq!(q.pop_front(), Some(1));
        assert_eq!(q.pop_front(), None);
        q.push_back(2);
        assert_eq!(q.front(), Some(&2));
    }
}
