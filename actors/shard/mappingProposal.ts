import type { DateFormatter } from './engine/base/dates';
import type { FieldDef, MappingView } from './engine/index/fieldDef';
import { defJson, type IndexMapping } from './engine/index/mapping';

interface Added {
  parent: FieldDef;
  name: string;
  def: FieldDef;
}

/**
 * A mapping view that records the dynamic fields a batch of documents would add, so the shard can
 * put them in the log as a `mapping_updated` fact before any document that uses them (ES sends
 * dynamic mapping updates to the master first, for the same reason): every copy and every replay
 * then parses those documents against the same mapping, whatever order the shards' batches reach
 * the log in.
 *
 * The fields are attached to the live mapping while the batch is parsed (a later document of the
 * batch sees what an earlier one added), and {@link takeProposal} detaches them again.
 */
export class RecordingView implements MappingView {
  private readonly added: Added[] = [];
  private readonly undos: Array<() => void> = [];

  constructor(private readonly m: IndexMapping) {}

  get root(): FieldDef {
    return this.m.root;
  }
  get dateDetection(): boolean {
    return this.m.dateDetection;
  }
  get numericDetection(): boolean {
    return this.m.numericDetection;
  }
  get dynamicDateFormats(): string[] {
    return this.m.dynamicDateFormats;
  }
  formatterOf(def: FieldDef): DateFormatter {
    return this.m.formatterOf(def);
  }

  attach(parent: FieldDef, name: string, def: FieldDef): () => void {
    const undo = this.m.attach(parent, name, def);
    const rec: Added = { parent, name, def };
    this.added.push(rec);
    this.undos.push(undo);
    return () => {
      // the parser gives up on a document: forget what it added
      undo();
      const i = this.added.indexOf(rec);
      if (i >= 0) {
        this.added.splice(i, 1);
        this.undos.splice(i, 1);
      }
    };
  }

  /**
   * The fields the parsed documents added, as a `PUT _mapping` body (undefined when none), after
   * detaching them from the live mapping.
   */
  takeProposal(): Record<string, unknown> | undefined {
    if (!this.added.length) return undefined;
    const newDefs = new Set(this.added.map((a) => a.def));
    const properties: Record<string, unknown> = {};
    for (const a of this.added) {
      if (newDefs.has(a.parent)) continue; // inside a new object: its defJson carries it
      let props = properties;
      if (a.parent.path) {
        for (const part of a.parent.path.split('.')) {
          const obj = (props[part] ??= { properties: {} }) as { properties: Record<string, unknown> };
          props = obj.properties;
        }
      }
      props[a.name] = defJson(a.def);
    }
    for (let i = this.undos.length - 1; i >= 0; i--) this.undos[i]();
    this.added.length = 0;
    this.undos.length = 0;
    return { properties };
  }
}
