//! How the simulation opens an instance ([`Service::open_simulated`]): the own lease stepped, and a
//! planted defect (coord's hook, `snowmint_coord::defect`: planted only with coord's feature
//! `planted-defects`).

use super::*;

/// How [`Service::open_simulated`] opens an instance: the own lease stepped, and (feature
/// `planted-defects`) a defect planted.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Simulated {
    pub(crate) stepped: bool,
    pub(crate) defect: Hook,
}

pub(crate) use snowmint_coord::defect::{Defect, Hook};

impl Simulated {
    /// The lease options of the service's own lease and client sequencer: stepped or not, with the
    /// planted defect.
    pub(crate) fn lease_options(&self) -> LeaseOptions {
        LeaseOptions {
            stepped: self.stepped,
            defect: self.defect,
            ..LeaseOptions::default()
        }
    }

    /// The own lease's holder string: this process's, or (stepped) one that names no process, so that a
    /// simulated run replays exactly (a stepped lease's first node ID to try follows from its holder).
    pub(crate) fn holder(&self) -> String {
        match self.stepped {
            true => "snowmint serve (simulated)".to_string(),
            false => format!(
                "snowmint serve, {}",
                snowmint_coord::lease::default_holder()
            ),
        }
    }
}
