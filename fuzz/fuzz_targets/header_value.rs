#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::targets::header_value(data));
