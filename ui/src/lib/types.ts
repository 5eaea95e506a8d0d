// The backend's types under the names the UI uses; UI code imports types
// from here only. Specta writes a type whose serde shape differs by
// direction twice: what the backend sends (`_Serialize`, every field
// present) and what it accepts (`_Deserialize`, defaulted fields optional).
// Each name below is the one direction the UI uses it in.
import type * as B from "../bindings";

// Received from the backend.
export type AccountsOverview = B.AccountsOverview_Serialize;
export type AccountView = B.AccountView_Serialize;
export type AgentKindInfo = B.AgentKindInfo_Serialize;
export type AttemptTranscript = B.AttemptTranscript_Serialize;
export type Readiness = B.Readiness_Serialize;
export type Transcript = B.Transcript_Serialize;
export type TranscriptEntry = B.Entry_Serialize;
export type TranscriptSummary = B.TranscriptSummary_Serialize;
export type FilesChanged = B.FilesChanged;
export type AttemptView = B.AttemptView_Serialize;
export type ContinuationPreview = B.ContinuationPreview_Serialize;
export type Candidate = B.Candidate_Serialize;
export type ClassificationSummary = B.ClassificationSummary_Serialize;
export type HoldView = B.HoldView_Serialize;
export type ActionView = B.ActionView_Serialize;
export type Actor = B.Actor;
export type MarkView = B.MarkView_Serialize;
export type ImportPreview = B.ImportPreview_Serialize;
export type InboxItem = B.InboxItem_Serialize;
export type PlaygroundResult = B.PlaygroundResult_Serialize;
export type Profile = B.Profile_Serialize;
export type RouteDetail = B.RouteDetail_Serialize;
export type RouteSnapshot = B.RouteSnapshot_Serialize;
export type TextPreview = B.TextPreview_Serialize;
export type TimelineEntry = B.TimelineEntry_Serialize;
export type WorkdirCheck = B.WorkdirCheck_Serialize;
export type CatalogueView = B.CatalogueView_Serialize;
export type RuleView = B.RuleView_Serialize;
export type RuleProposal = B.RuleProposal_Serialize;
export type RuleReview = B.RuleReview_Serialize;
export type RuleChecks = B.RuleChecks_Serialize;
export type Change = B.Change_Serialize;
export type Verdict = B.Verdict_Serialize;
export type SavedRule = B.SavedRule_Serialize;
/** Proposed by the backend, edited, and sent back to check and save. */
export type RuleDraft = B.RuleDraft_Serialize;
/** Received as an inbox item's evidence and sent back, complete, to classify. */
export type PlaygroundInput = B.PlaygroundInput_Serialize;
/** Received complete (its unclassified section too), edited, and sent back
 * complete; its optional `auto_continue` is left out while off, both ways. */
export type CandidatePolicy = B.CandidatePolicy_Serialize;
export type ClassPolicy = B.ClassPolicy_Serialize;
export type PreviewStep = B.PreviewStep_Serialize;
export type Preview = B.Preview_Serialize;

// Sent to the backend.
export type AgentSpec = B.AgentSpec_Deserialize;
export type CandidateInput = B.CandidateInput_Deserialize;
export type SimulatedFailure = B.SimulatedFailure_Deserialize;
export type StartRun = B.StartRun_Deserialize;
export type RuleSource = B.RuleSource_Deserialize;
export type PathRequest = B.PathRequest_Deserialize;
export type CandidateSlot = B.CandidateSlot_Deserialize;

// The same shape both ways.
export type {
  Access,
  AccountStatus,
  ActionRequest,
  HourBar,
  AgentKind,
  AttemptOutcome,
  Class,
  Confidence,
  FieldError,
  Exhausted,
  ExistingProfile,
  FixtureExport,
  Folder,
  GapReason,
  HintSource,
  IpcError,
  ManualAction,
  MatchOutcome,
  Phase,
  PolicyClass,
  Provider,
  RetryProgress,
  UnclassifiedPolicy,
  RouteCounts,
  RouteFilter,
  RouteState,
  Scope,
  SecretEnv,
  SimStep,
  Span,
  ToolStatus,
} from "../bindings";

// Background mode.
export type CloseChoice = B.CloseChoice;
export type CloseQuestion = B.CloseRequested;
export type EngineStatus = B.EngineStatus;
/** Received from the backend and sent back whole after editing. */
export type Settings = B.Settings_Serialize;
