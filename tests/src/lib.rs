//! End-to-end test harness (filled by the worker issue).
