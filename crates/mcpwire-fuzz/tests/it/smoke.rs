//! Each fuzz target on its seeds and on mutations of them (a fixed-seed generator, so that a
//! failure reproduces): what CI can afford on stable. The long runs are `fuzz/`'s.

const MUTATIONS_PER_TARGET: usize = 20_000;

/// xorshift64*: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that matter to the parsers under test.
const INTERESTING: &[u8] = b"{}[]\":,\\\n\r 0-9.eE+=?/#&;*%ab\x00\xff";

fn mutate(rng: &mut Rng, input: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            1 => {
                let i = rng.below(out.len() + 1);
                out.insert(i, INTERESTING[rng.below(INTERESTING.len())]);
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                let n = rng.below(out.len() - i) + 1;
                out.drain(i..i + n);
            }
            3 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            4 if !seeds.is_empty() => {
                let other = &seeds[rng.below(seeds.len())];
                let i = rng.below(out.len() + 1);
                out.splice(i..i, other.iter().copied());
                out.insert(i, b'\n');
            }
            _ => {
                let i = rng.below(out.len() + 1);
                let j = rng.below(out.len() + 1);
                let (a, b) = (i.min(j), i.max(j));
                let copy: Vec<u8> = out[a..b].to_vec();
                out.splice(a..a, copy);
            }
        }
    }
    out
}

#[test]
fn every_target_holds_on_its_seeds_and_their_mutations() {
    for (name, target) in mcpwire_fuzz::TARGETS {
        let seeds = mcpwire_fuzz::seeds(name);
        assert!(!seeds.is_empty(), "{name} has seeds");
        for seed in &seeds {
            target(seed);
        }
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        let mut current = seeds[0].clone();
        for i in 0..MUTATIONS_PER_TARGET {
            if i % 64 == 0 {
                current = seeds[rng.below(seeds.len())].clone();
            }
            current = mutate(&mut rng, &current, &seeds);
            current.truncate(4096);
            target(&current);
        }
    }
}

/// Inputs libFuzzer found, kept as regression cases.
#[test]
fn inputs_fuzzing_found() {
    // The id `-0`, which the engine reads (and answers) as `0`: a finding of the harness's
    // own bookkeeping, which compared ids as written.
    mcpwire_fuzz::targets::server_engine(
        b"{nitized\"}\n{\"jsonrpc\":\"2.0\",\"id\":-0,\"Token\":\".0\",\"\":\"notifications/initialized\"}\n[{{\"\"'o\"d\"",
    );
    // A method that is a number too large for a float: valid JSON, which the engine reads
    // (and answers: the method must be a string) while `serde_json::Value` refuses it; the
    // harness counted no id for the line. Alone and in a batch.
    mcpwire_fuzz::targets::server_engine(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":22222222222222222e2220}");
    mcpwire_fuzz::targets::server_engine(
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1e400},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
    );
}
