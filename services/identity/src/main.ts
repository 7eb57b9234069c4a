import { runDistributedService } from "@c402/runtime";
import { createIdentityService, identityConfigSpec, IDENTITY_SCHEMA } from "./index";

void runDistributedService({ name: "identity", schema: IDENTITY_SCHEMA, spec: identityConfigSpec, build: createIdentityService });
