//! What an ended attempt's report becomes before the machine decides: a
//! sanitized, correlated, classified failure, the route's earlier attempts
//! as a repeat count reads them back, or the record of a late result.

use chrono_tz::Tz;

use super::{Engine, EngineError};
use crate::classification::RuntimeFailure;
use crate::evaluator::Sighting;
use crate::evidence::{Correlation, Evidence, RawEvidence};
use crate::policy::REPEAT_THRESHOLD_RANGE;
use crate::route::machine::{self, Failure, Late};
use crate::route::{AttemptRecord, RouteRow};
use crate::runner::RunReport;
use crate::safety::EffectContext;

impl Engine {
    /// Sanitizes, correlates and classifies a failed attempt's evidence;
    /// `zone` is the one the agent ran in.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn failure(
        &self,
        row: &RouteRow,
        attempt: &AttemptRecord,
        mut raw: RawEvidence,
        mut effect: EffectContext,
        runtime: Option<RuntimeFailure>,
        zone: Tz,
        current: bool,
    ) -> Failure {
        raw.correlation = Some(Correlation {
            route_id: row.id.to_string(),
            generation: attempt.generation,
            attempt: attempt.number,
            invocation_id: attempt.invocation_id.clone(),
        });
        effect.evidence_current = Some(current);
        let evidence = Evidence::from_raw(raw);
        let catalogue = self.catalogue();
        let classification = match runtime {
            Some(failure) => failure.classify(&catalogue.version),
            None => catalogue.classify(&evidence, zone),
        };
        Failure {
            number: attempt.number,
            evidence,
            classification,
            effect,
            session: machine::Session::default(),
            files_changed: None,
            earlier: Vec::new(),
        }
    }

    /// The route's attempts before attempt `number`, as far back as a
    /// repeat count can reach, as the count sees them: read from the
    /// store, so a restart loses nothing of it.
    pub(super) fn earlier_sightings(
        &self,
        route_id: u32,
        number: u32,
    ) -> Result<Vec<Sighting>, EngineError> {
        let reach = REPEAT_THRESHOLD_RANGE.end() - 1;
        let attempts = self.store().attempts_before(route_id, number, reach)?;
        Ok(attempts
            .iter()
            .map(|(a, files)| machine::earlier_sighting(&a.attempt, a.result.as_ref(), *files))
            .collect())
    }

    /// The attempt ended after its route moved on (stopped, taken over):
    /// its result is kept in the history and decides nothing.
    pub(super) fn record_late(
        &self,
        row: &RouteRow,
        attempt: &AttemptRecord,
        report: RunReport,
        zone: Tz,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), EngineError> {
        let late = match report {
            RunReport::Succeeded => Late::Succeeded,
            RunReport::Failed { raw, effect } => Late::Failed(Box::new(
                self.failure(row, attempt, raw, effect, None, zone, false),
            )),
            RunReport::Runtime {
                failure,
                raw,
                effect,
            } => Late::Failed(Box::new(self.failure(
                row,
                attempt,
                raw,
                effect,
                Some(failure),
                zone,
                false,
            ))),
            RunReport::Killed => Late::Killed,
        };
        let result = machine::late_result(attempt.number, late, now);
        self.store().record_late_result(row.id, &result)?;
        Ok(())
    }
}
