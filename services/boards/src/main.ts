// Process entry point of the boards service (docs/architecture.md §2): the only place that reads the environment.
import { runServiceProcess } from '@app/shared/runtime';
import { boardsService } from './service.js';

await runServiceProcess(boardsService, process.env);
