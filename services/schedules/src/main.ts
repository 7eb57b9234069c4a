import { paymentsV1 } from "@c402/contracts";
import { runDistributedService } from "@c402/runtime";
import { createSchedulesService, schedulesConfigSpec, schedulesMigrations, schedulesSettingsOf, SCHEDULES_SCHEMA } from "./index";

void runDistributedService({
  name: "schedules",
  schema: SCHEDULES_SCHEMA,
  spec: schedulesConfigSpec,
  migrations: schedulesMigrations,
  build: (deps, config, connect) => createSchedulesService(deps, connect(paymentsV1.PaymentsService, config.paymentsAddress), schedulesSettingsOf(config)),
});
