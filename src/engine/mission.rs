//! Which user message is the session's mission (its title): the first with the user's words.
//! An agent may open with a script of its own (aider's examples of its edit format: user
//! messages answered by text alone, recorded before the first call): a later user message is
//! then the mission, unless an action before the first call shows the exchange was real.

/// What the opening of a session has shown so far.
#[derive(Debug, Default)]
pub(super) struct Opening {
    /// The first user words, while the mission may still move.
    first: Option<String>,
    /// The mission's message was answered by text alone.
    answered: bool,
    /// A call was prepared or an action recorded: the mission stays.
    settled: bool,
}

impl Opening {
    /// A user message with `words` (empty: only an agent's context) was recorded.
    pub(super) fn user(&mut self, mission: &mut String, words: String) {
        if words.is_empty() {
            return;
        }
        if mission.is_empty() {
            self.first.get_or_insert_with(|| words.clone());
            *mission = words;
        } else if self.answered && !self.settled {
            *mission = words;
            self.answered = false;
        }
    }

    /// A message of the assistant (`acts`: with a tool call or a command) or an action was
    /// recorded, `calls` prepared so far.
    pub(super) fn reply(&mut self, mission: &mut String, acts: bool, calls: usize) {
        if self.settled || calls > 0 {
            self.settle();
        } else if acts {
            // The exchanges before were the conversation's own: its first words are the mission.
            if let Some(first) = self.first.take() {
                *mission = first;
            }
            self.settle();
        } else if !mission.is_empty() {
            self.answered = true;
        }
    }

    /// A call was prepared: the mission stays.
    pub(super) fn settle(&mut self) {
        *self = Opening { settled: true, ..Opening::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Record `script` (`u:` user words, `a:` a text reply, `act` a reply that acts, `call` a
    /// call prepared) and return the mission.
    fn mission_after(script: &[&str]) -> String {
        let (mut opening, mut mission, mut calls) = (Opening::default(), String::new(), 0);
        for step in script {
            match *step {
                "call" => {
                    opening.settle();
                    calls += 1;
                }
                "act" => opening.reply(&mut mission, true, calls),
                "a" => opening.reply(&mut mission, false, calls),
                words => opening.user(&mut mission, words.to_owned()),
            }
        }
        mission
    }

    #[test]
    fn an_opening_script_leaves_the_mission_to_the_task_after_it() {
        let aider = ["Change get_factorial()", "a", "I switched to a new code base.", "a", "I added these files", "a"];
        assert_eq!(
            mission_after(&[&aider[..], &["Fix the typo", "call", "a", "later words"]].concat()),
            "Fix the typo"
        );
        // An action before the first call: the exchange was the conversation's own.
        assert_eq!(mission_after(&["Fix calc.py", "a", "Run the tests", "act", "a", "More"]), "Fix calc.py");
        // After the first call the mission stays.
        assert_eq!(mission_after(&["Fix calc.py", "call", "a", "Thanks"]), "Fix calc.py");
        assert_eq!(mission_after(&["", "Fix calc.py", "a"]), "Fix calc.py", "context only is no mission");
    }
}
