//! How the simulation opens an instance ([`Service::open_simulated`]): the own lease stepped, and a
//! planted defect (feature `planted-defects`).

use super::*;

/// How [`Service::open_simulated`] opens an instance: the own lease stepped, and (feature
/// `planted-defects`) a defect planted.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Simulated {
    pub(crate) stepped: bool,
    #[cfg(feature = "planted-defects")]
    pub(crate) defect: snowmint_coord::lease::Defect,
}

#[cfg(feature = "planted-defects")]
pub(crate) use snowmint_coord::lease::Defect;

/// The planted defects of the service (a stand-in without the feature, where none is ever on).
#[cfg(not(feature = "planted-defects"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    ServiceFixedNodeUnclaimed,
    ServiceOtherClientSequencer,
}

impl Simulated {
    /// The lease options of the service's own lease and client sequencer: stepped or not, with the
    /// planted defect.
    pub(crate) fn lease_options(&self) -> LeaseOptions {
        LeaseOptions {
            stepped: self.stepped,
            #[cfg(feature = "planted-defects")]
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

    /// Whether the planted defect `d` is on: always `false` without the feature `planted-defects`.
    pub(crate) fn planted(&self, d: Defect) -> bool {
        #[cfg(feature = "planted-defects")]
        return self.defect == d;
        #[cfg(not(feature = "planted-defects"))]
        {
            let _ = d;
            false
        }
    }
}
