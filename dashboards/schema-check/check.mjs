// Type-checks each dashboard JSON in ../ against Grafana's own dashboard types (@grafana/schema).
//
// Each dashboard is written out as a typed object literal, so TypeScript checks string unions (panel
// and variable types, modes) and rejects unknown properties; then tsc --noEmit runs. Two things JSON
// cannot say are bridged here:
// - string enums (FieldColorModeId, ThresholdsMode, MappingType) are emitted as enum members, found
//   by value at run time; a value that is no member becomes a reference tsc rejects;
// - Grafana leaves each data source's query model open: the Prometheus fields of panel targets and
//   annotation queries (expr, legendFormat, step, titleFormat, ...) are declared below, as Grafana's
//   own grafonnet emits them.
import { readdirSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as schema from '@grafana/schema';

const here = dirname(fileURLToPath(import.meta.url));
const dashboards = join(here, '..');
const generated = join(here, 'generated');
rmSync(generated, { recursive: true, force: true });
mkdirSync(generated);

const enumRules = [
  { when: (path) => path.at(-2) === 'color' && path.at(-1) === 'mode', name: 'FieldColorModeId' },
  { when: (path) => path.at(-2) === 'thresholds' && path.at(-1) === 'mode', name: 'ThresholdsMode' },
  { when: (path) => path.at(-3) === 'mappings' && path.at(-1) === 'type', name: 'MappingType' },
];

function enumReference(name, value) {
  const member = Object.entries(schema[name]).find(([, v]) => v === value)?.[0];
  return member ? `${name}.${member}` : `${name}[${JSON.stringify(value)}]`;
}

function emit(value, path, indent) {
  const pad = '  '.repeat(indent + 1);
  const close = '  '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item, i) => pad + emit(item, [...path, i], indent + 1)).join(',\n')}\n${close}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${emit(v, [...path, k], indent + 1)}`).join(',\n')}\n${close}}`;
  }
  if (typeof value === 'string') {
    const rule = enumRules.find((r) => r.when(path));
    if (rule) return enumReference(rule.name, value);
  }
  return JSON.stringify(value);
}

const files = readdirSync(dashboards).filter((name) => name.endsWith('.json'));
if (files.length === 0) {
  console.error('no dashboards found');
  process.exit(1);
}

const header = `import type { Dashboard, AnnotationQuery, DataQuery } from '@grafana/schema';
import { FieldColorModeId, ThresholdsMode, MappingType } from '@grafana/schema';
void FieldColorModeId; void ThresholdsMode; void MappingType;

/** The Prometheus query model of a panel target. */
interface PrometheusQuery extends DataQuery {
  expr: string;
  legendFormat?: string;
  range?: boolean;
  instant?: boolean;
}

/** A Prometheus annotation query, in the form Grafana's grafonnet emits. */
interface PrometheusAnnotation extends AnnotationQuery {
  expr: string;
  step?: string;
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type MuxWatchDashboard = Omit<Dashboard, 'annotations' | 'panels'> & {
  annotations: { list: Array<AnnotationQuery | PrometheusAnnotation> };
  panels: Array<DistributiveOmit<NonNullable<Dashboard['panels']>[number], 'targets'> & { targets?: PrometheusQuery[] }>;
};
`;

for (const file of files) {
  const dashboard = JSON.parse(readFileSync(join(dashboards, file), 'utf8'));
  for (const required of ['uid', 'title', 'schemaVersion', 'panels', 'templating', 'annotations']) {
    if (!(required in dashboard)) {
      console.error(`${file}: missing ${required}`);
      process.exit(1);
    }
  }
  writeFileSync(join(generated, file.replace(/\.json$/, '.ts')),
    `${header}\nexport const dashboard: MuxWatchDashboard = ${emit(dashboard, [], 0)};\n`);
}

writeFileSync(join(generated, 'tsconfig.json'), JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true },
  include: ['*.ts'],
}));

try {
  execFileSync(process.execPath, [join(here, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(generated, 'tsconfig.json')], { stdio: 'inherit' });
} catch {
  console.error('dashboard type check failed');
  process.exit(1);
}
console.log(`${files.length} dashboards match @grafana/schema's Dashboard type`);
