//! What the guard benchmark found: each attack and read, and the figures by class, by pass and overall.

use serde::{Deserialize, Serialize};

/// How an attack ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttackOutcome {
    /// Held: the guard refused it; the engine never saw it.
    Refused,
    /// Held: the guard let it through and the engine stopped it (its read-only mode, or an error).
    Stopped,
    /// Held: it ran, and none of its effects was seen.
    RanWithoutEffect,
    /// An effect was seen: the attack got through.
    Escaped,
}

impl AttackOutcome {
    /// True unless it escaped.
    pub fn held(self) -> bool {
        self != Self::Escaped
    }
}

/// One attack on one engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttackResult {
    /// Its name in the corpus.
    pub name: String,
    /// Its class (the corpus heading above it).
    pub class: String,
    /// The pass it ran in: `sqlite`, `postgres`, `postgres_scs_off` or `mariadb`.
    pub engine: String,
    /// How it ended.
    pub outcome: AttackOutcome,
    /// What it must not do, as the corpus says.
    pub effects: Vec<String>,
    /// What was seen of those effects (empty unless it escaped).
    pub observed: Vec<String>,
    /// The refusal or the engine's error, on one line.
    pub message: Option<String>,
    /// The reason codes of the guard's verdict (empty when it allowed the SQL).
    pub reasons: Vec<String>,
    /// The reason code the corpus expects.
    pub expected_reason: Option<String>,
    /// How long it took, in milliseconds.
    pub elapsed_ms: u64,
}

/// How a legitimate read ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadOutcome {
    /// It ran.
    Allowed,
    /// The guard refused it: a false refusal.
    Refused,
    /// The guard let it through and the engine failed it: a false refusal too.
    Failed,
}

/// One legitimate read on one engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadResult {
    /// Its name in the corpus.
    pub name: String,
    /// Its class (the corpus heading above it).
    pub class: String,
    /// The pass it ran in.
    pub engine: String,
    /// How it ended.
    pub outcome: ReadOutcome,
    /// The rows it returned.
    pub rows: usize,
    /// The refusal or the error, on one line.
    pub message: Option<String>,
}

/// Attacks of one class (or of a pass, or all of them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackTally {
    /// The class, the pass, or `all`.
    pub class: String,
    /// Attacks run.
    pub total: usize,
    /// Attacks held: refused, stopped, or without effect.
    pub held: usize,
    /// Attacks with an effect seen.
    pub escaped: usize,
    /// Held by the guard's refusal.
    pub refused_by_guard: usize,
    /// Held by the engine (its read-only mode, or an error) after the guard let them through.
    pub stopped_by_engine: usize,
    /// Held although they ran: no effect seen.
    pub ran_without_effect: usize,
}

impl AttackTally {
    fn named(class: &str) -> Self {
        Self {
            class: class.to_owned(),
            ..Self::default()
        }
    }

    fn add(&mut self, outcome: AttackOutcome) {
        self.total += 1;
        match outcome {
            AttackOutcome::Refused => self.refused_by_guard += 1,
            AttackOutcome::Stopped => self.stopped_by_engine += 1,
            AttackOutcome::RanWithoutEffect => self.ran_without_effect += 1,
            AttackOutcome::Escaped => self.escaped += 1,
        }
        self.held = self.total - self.escaped;
    }
}

/// Legitimate reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadTally {
    /// Reads run.
    pub total: usize,
    /// Reads that ran.
    pub allowed: usize,
    /// Reads refused by the guard or failed by the engine.
    pub false_refusals: usize,
}

/// One pass: the corpus on one engine (PostgreSQL takes two: `standard_conforming_strings` on and off).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassTally {
    /// `sqlite`, `postgres`, `postgres_scs_off` or `mariadb`.
    pub engine: String,
    /// The scratch database it ran on (removed since): the SQLite file, or the database's name on the server.
    pub database: String,
    /// Its attacks.
    pub attacks: AttackTally,
    /// Its legitimate reads.
    pub legit: ReadTally,
}

/// The benchmark's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuardReport {
    /// The server: `sqlite`, `postgres`, `mariadb` or `mysql`.
    pub engine: String,
    /// Where: `scratch SQLite database`, or the server's URL without its password.
    pub database: String,
    /// Every attack, overall.
    pub attacks: AttackTally,
    /// By class, in corpus order.
    pub classes: Vec<AttackTally>,
    /// Every legitimate read.
    pub legit: ReadTally,
    /// By pass.
    pub passes: Vec<PassTally>,
    /// The attacks that escaped (this should be empty).
    pub escaped: Vec<AttackResult>,
    /// The legitimate reads refused or failed.
    pub false_refusals: Vec<ReadResult>,
    /// Every attack.
    pub attack_results: Vec<AttackResult>,
    /// Every legitimate read.
    pub read_results: Vec<ReadResult>,
    /// What could not be cleaned up, and other remarks.
    pub warnings: Vec<String>,
    /// How long the benchmark took, in milliseconds.
    pub elapsed_ms: u64,
}

impl GuardReport {
    /// True when no attack escaped.
    pub fn all_held(&self) -> bool {
        self.attacks.escaped == 0
    }

    /// Adds one pass's results.
    pub(crate) fn add_pass(
        &mut self,
        engine: &str,
        database: String,
        attacks: Vec<AttackResult>,
        reads: Vec<ReadResult>,
    ) {
        let mut pass = PassTally {
            engine: engine.to_owned(),
            database,
            attacks: AttackTally::named(engine),
            legit: ReadTally::default(),
        };
        for attack in attacks {
            pass.attacks.add(attack.outcome);
            self.attacks.add(attack.outcome);
            match self.classes.iter_mut().find(|c| c.class == attack.class) {
                Some(class) => class.add(attack.outcome),
                None => {
                    let mut class = AttackTally::named(&attack.class);
                    class.add(attack.outcome);
                    self.classes.push(class);
                }
            }
            if !attack.outcome.held() {
                self.escaped.push(attack.clone());
            }
            self.attack_results.push(attack);
        }
        for read in reads {
            for tally in [&mut pass.legit, &mut self.legit] {
                tally.total += 1;
                if read.outcome == ReadOutcome::Allowed {
                    tally.allowed += 1;
                } else {
                    tally.false_refusals += 1;
                }
            }
            if read.outcome != ReadOutcome::Allowed {
                self.false_refusals.push(read.clone());
            }
            self.read_results.push(read);
        }
        self.passes.push(pass);
    }
}
