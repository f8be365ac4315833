//! Reference layers (placeholder).
