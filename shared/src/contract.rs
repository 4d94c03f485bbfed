//! Message contracts (SPEC section 2): the only serde wire types.
