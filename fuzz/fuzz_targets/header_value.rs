#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpwire_fuzz::targets::header_value(data));
