//! The proxy's conversations by key, bounded: past `proxy.max_sessions` keys, the least recently
//! used one that has no request in flight makes room (its sessions are saved and closed). What a
//! key holds is the shell's: a thread's handle natively, the conversation itself in wasm.

use std::collections::HashMap;

use super::request::SessionKey;

/// Keys and what each holds, with when it was last used.
#[derive(Debug)]
pub struct SessionTable<T> {
    entries: HashMap<String, Entry<T>>,
    clock: u64,
    max_keys: usize,
}

#[derive(Debug)]
struct Entry<T> {
    key: SessionKey,
    value: T,
    last_used: u64,
}

impl<T> SessionTable<T> {
    /// A table of at most `max_keys` keys (at least one).
    pub fn new(max_keys: usize) -> SessionTable<T> {
        SessionTable { entries: HashMap::new(), clock: 0, max_keys: max_keys.max(1) }
    }

    /// What `key` holds, opened with `open` when the key is new, now the most recently used;
    /// and what made room for it: the least recently used key that is not `busy` (none when
    /// every key is busy: the table then holds one more until one is idle).
    pub fn touch(
        &mut self,
        key: &SessionKey,
        open: impl FnOnce() -> T,
        busy: impl Fn(&SessionKey, &T) -> bool,
    ) -> (&mut T, Option<(SessionKey, T)>) {
        self.clock += 1;
        let name = key.name();
        let evicted = if self.entries.contains_key(&name) || self.entries.len() < self.max_keys {
            None
        } else {
            let idle = self.entries.iter().filter(|(_, e)| !busy(&e.key, &e.value)).min_by_key(|(_, e)| e.last_used);
            let oldest = idle.map(|(name, _)| name.clone());
            oldest.and_then(|name| self.entries.remove(&name)).map(|e| (e.key, e.value))
        };
        let entry = self.entries.entry(name).or_insert_with(|| Entry { key: key.clone(), value: open(), last_used: 0 });
        entry.last_used = self.clock;
        (&mut entry.value, evicted)
    }

    /// What the key named `name` ([`SessionKey::name`]) holds.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.entries.get(name).map(|e| &e.value)
    }

    /// The most recently used key of the agent's session `agent_session` (its main
    /// conversation, not one of its side calls), and what it holds.
    pub fn latest_of(&self, agent_session: &str) -> Option<(&SessionKey, &T)> {
        let of_session = self.entries.values().filter(|e| e.key.agent_session.as_deref() == Some(agent_session));
        of_session.max_by_key(|e| e.last_used).map(|e| (&e.key, &e.value))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every key and what it holds, least recently used first, leaving the table empty.
    pub fn drain(&mut self) -> Vec<(SessionKey, T)> {
        let mut all: Vec<Entry<T>> = self.entries.drain().map(|(_, e)| e).collect();
        all.sort_by_key(|e| e.last_used);
        all.into_iter().map(|e| (e.key, e.value)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> SessionKey {
        SessionKey { agent_session: None, conversation: n, person: None }
    }

    #[test]
    fn the_least_recently_used_idle_key_makes_room() {
        let mut table = SessionTable::new(2);
        table.touch(&key(1), || "one", |_, _| false);
        table.touch(&key(2), || "two", |_, _| false);
        table.touch(&key(1), || unreachable!(), |_, _| false);
        let (value, evicted) = table.touch(&key(3), || "three", |_, _| false);
        assert_eq!(*value, "three");
        assert_eq!(evicted.map(|(k, v)| (k.conversation, v)), Some((2, "two")));
        // Every other key busy: none is evicted, the table holds one more.
        let (_, evicted) = table.touch(&key(4), || "four", |_, _| true);
        assert!(evicted.is_none());
        assert_eq!(table.len(), 3);
        let order: Vec<u64> = table.drain().into_iter().map(|(k, _)| k.conversation).collect();
        assert_eq!(order, [1, 3, 4]);
    }

    #[test]
    fn a_side_call_finds_the_latest_conversation_of_its_session() {
        let of =
            |session: &str, n: u64| SessionKey { agent_session: Some(session.into()), conversation: n, person: None };
        let mut table = SessionTable::new(8);
        table.touch(&of("s", 5), || "five", |_, _| false);
        table.touch(&of("s", 6), || "six", |_, _| false);
        table.touch(&of("t", 7), || "seven", |_, _| false);
        table.touch(&key(8), || "eight", |_, _| false);
        assert_eq!(table.latest_of("s").map(|(k, v)| (k.conversation, *v)), Some((6, "six")));
        table.touch(&of("s", 5), || unreachable!(), |_, _| false);
        assert_eq!(table.latest_of("s").map(|(k, _)| k.conversation), Some(5));
        assert!(table.latest_of("u").is_none());
    }
}
