//! Writes a target's seeds into a corpus directory: `seeds TARGET DIR`.

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(target), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: seeds TARGET DIR");
        std::process::exit(2);
    };
    for (i, seed) in mcpwire_fuzz::seeds(&target).iter().enumerate() {
        std::fs::write(format!("{dir}/seed-{i}"), seed).expect("the corpus directory is writable");
    }
}
