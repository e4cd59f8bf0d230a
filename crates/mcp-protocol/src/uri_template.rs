//! RFC 6570 URI templates (being written).
