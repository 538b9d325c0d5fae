// Process entry point of the query service (docs/architecture.md §2): the only place that reads the environment.
import { runServiceProcess } from '@app/shared/runtime';
import { queryService } from './service.js';

await runServiceProcess(queryService, process.env);
