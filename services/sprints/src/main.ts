// Process entry point of the sprints service (docs/architecture.md §2): the only place that reads the environment.
import { runServiceProcess } from '@app/shared/runtime';
import { sprintsService } from './service.js';

await runServiceProcess(sprintsService, process.env);
