// What a plan of a dbt project is (project-plan.ts makes one; apply, the reports, saved plans and the
// views read it), apart from the planning, so that those modules need not import it.
import type { ApiClient } from '../client/index.js';
import type { ContractIntentRequest } from '../client/areas/contracts.js';
import type { MappedTest, NotMappedTest } from '../core/dbt/types.js';
import type { LocalArtifact } from './artifacts.js';

export type PlanClient = Pick<
  ApiClient,
  'tables' | 'connectors' | 'artifacts' | 'gates' | 'gateJobs' | 'contracts'
>;

/**
 * What apply does with a table: `skipped` is a selected node gds governs nothing of (an ephemeral model);
 * `submit` (planned with --submit) a table of this project nothing else changes, QUARANTINED and never
 * submitted as it is: apply --submit submits it for review.
 */
export type PlanAction =
  'create' | 'replace' | 'unchanged' | 'gone' | 'refused' | 'owned-elsewhere' | 'skipped' | 'submit';

/** Whose a table on the service is: this project's, another project's, or registered by hand (no project). */
export type Ownership = 'this' | 'other' | 'hand';

export interface PlannedChanges {
  definition: boolean;
  gate1: boolean;
  contract: boolean;
}

export interface PlannedTable {
  table: string;
  /** `schema.table` of the warehouse object. */
  source: string | null;
  action: PlanAction;
  /** The table on the service; null for a new one. */
  tableId: string | null;
  /** The dbt node (model, seed or snapshot); absent for a gone table. */
  uniqueId: string | null;
  resourceType: string | null;
  mappedTests: MappedTest[];
  notMappedTests: NotMappedTest[];
  /** Every Gate 1 rule the table gets, in words, implied ones included; absent for a gone or refused table. */
  rules?: string[];
  changes: PlannedChanges;
  /** Unified diffs of what changes; a part that does not change is left out. */
  diffs: { definition?: string; gate1?: string; contract?: string };
  /** Why the table is refused, owned elsewhere, skipped or submitted, or (--submit) left CERTIFIED. */
  reason?: string;
  /** Whose the table on the service is; absent for a new table. */
  ownership?: Ownership;
  /** The project the service records as its owner (null: none). */
  owner?: string | null;
  /** apply records this project as the owner first (--adopt), the owner it saw being `from`. */
  adopt?: { from: string | null };
  /** Recorded under an id an earlier gds derived for this project (`owner`): apply records the current one. */
  migrate?: boolean;
  /** The CERTIFIED tables downstream of this one in the dbt DAG (a table to create or replace). */
  downstreamCertified?: string[];
  /** Applying this table files a recertification request: it is CERTIFIED, and its definition or gate1.yml changes. */
  recertificationRequested?: boolean;
  /**
   * `submit` of a table waiting for review whose submission's proof is stale (rebuilt since): apply submits it
   * again while it still waits for review.
   */
  staleSubmission?: true;
  /** What the service held when planned (a saved plan is applied only while it still holds this). */
  seen?: Seen;
  /**
   * The --exclude value of an owned-elsewhere table's node, for apply's hint (not printed): its name, or its
   * fqn where the name reaches other nodes too (node-selector.ts nodeSelectors).
   */
  selector?: string;
  /**
   * The name the service holds an owned-elsewhere table under, when not the model's (a table registered under
   * another name over the model's relation): the name --adopt takes, for apply's hint (not printed).
   */
  heldName?: string;
  /** What apply sends (not printed). */
  work?: TableWork;
}

/** The versions of a table the plan compared with. */
export interface Seen {
  definitionVersion: number;
  gate1Version: number;
  contractRevision: number;
  project: string | null;
}

/** What `apply` writes for one table. */
export interface TableWork {
  artifact: LocalArtifact;
  gate1?: { name: string; text: string };
  intent?: ContractIntentRequest;
}

export interface ProjectPlan {
  projectName: string;
  /** The project's id on the service: gds.yml's `project:`, else dbt's name with the connector. */
  project: { id: string; from: 'gds.yml' | 'derived' };
  /** On first use without gds.yml's `project:`, the line to write there to keep the id. */
  proposal?: string;
  /** Tables of the environment the plan leaves alone: other projects' and ones registered by hand. */
  untouched: { otherProjects: number; byHand: number };
  /**
   * The connector of every table, or null with --env and no connector: each table then goes to the connector
   * whose warehouse schema holds its source, as the service chooses on `push` (a project over several schemas).
   */
  connector: { id: string | null; environmentLabel: string };
  tables: PlannedTable[];
  /** Planned with --submit: apply submits the tables it writes, and the `submit` ones (absent: false). */
  submit?: boolean;
  /** Tests attached to no selected node, each with why. */
  otherTests: NotMappedTest[];
  warnings: string[];
  counts: {
    create: number;
    replace: number;
    unchanged: number;
    gone: number;
    refused: number;
    ownedElsewhere: number;
    skipped: number;
    submit: number;
  };
}
