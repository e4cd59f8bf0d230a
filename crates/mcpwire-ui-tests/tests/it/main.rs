//! The diagnostics of the macros and of the traits they rely on, as users see them: each
//! case under `ui/` must fail to compile with the message in its `.stderr` file.
//! (`TRYBUILD=overwrite cargo test -p mcpwire-ui-tests` writes them again after a deliberate
//! change; read the diff.)

#[test]
fn diagnostics_name_the_fault_and_the_fix() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
