/**
 * `npm run local-service`: runs the local service's CLI from its bundle (dist/local-service.js, built
 * when stale), as `npm start` runs the gateway's; tsx is not needed at run time. Flags pass through
 * (`npm run local-service -- --port 3000 --data-dir ./.data`).
 */
import { runBundle } from './start.mjs';

await runBundle('local-service');
