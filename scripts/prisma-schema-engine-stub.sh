#!/bin/sh
echo "Prisma's schema engine is not available offline: migrations are SQL files applied with 'npm run migrate' (docs/decisions/001-offline-migrations.md)." >&2
exit 1
