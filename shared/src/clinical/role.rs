//! The nine clinical roles and a unit's tag.

/// The nine roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Who was studied or is to be treated.
    Population,
    /// The treatment studied, what it is, allocation to it.
    Intervention,
    /// The control or comparator arm.
    Comparison,
    /// Reported results and effects.
    Outcome,
    /// Inclusion and exclusion criteria, contraindicated groups.
    Eligibility,
    /// The definition of an outcome measure.
    Endpoint,
    /// Harms, warnings, safety findings.
    AdverseEvent,
    /// Doses, schedules, administration.
    DoseRegimen,
    /// Anything else.
    General,
}

impl Role {
    /// Every role, in [`Role::name`] order of the docs.
    pub const ALL: [Role; 9] = [
        Role::Population,
        Role::Intervention,
        Role::Comparison,
        Role::Outcome,
        Role::Eligibility,
        Role::Endpoint,
        Role::AdverseEvent,
        Role::DoseRegimen,
        Role::General,
    ];

    /// The role's name, as `facet_type` carries it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Population => "pico_population",
            Role::Intervention => "pico_intervention",
            Role::Comparison => "pico_comparison",
            Role::Outcome => "pico_outcome",
            Role::Eligibility => "eligibility",
            Role::Endpoint => "endpoint",
            Role::AdverseEvent => "adverse_event",
            Role::DoseRegimen => "dose_regimen",
            Role::General => "general",
        }
    }

    /// The role called `name`.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A unit's role and how sure the rules are of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tag {
    /// The role.
    pub role: Role,
    /// In `[0, 1]`.
    pub confidence: f32,
}
