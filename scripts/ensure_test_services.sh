#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on localhost for the test suite: start them if they
# are installed and down, and say exactly what to install if they are missing.
set -euo pipefail

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  if ls /etc/postgresql/*/main >/dev/null 2>&1 && command -v pg_ctlcluster >/dev/null; then
    echo "starting PostgreSQL..."
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  fi
  pg_up || { echo "error: PostgreSQL is not running on 127.0.0.1:5432 and could not be started."; \
             echo "       install it (Debian: apt-get install postgresql) or set DATABASE_URL."; exit 1; }
fi

if ! redis_up; then
  if command -v redis-server >/dev/null; then
    echo "starting Redis..."
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    for _ in $(seq 1 20); do redis_up && break; sleep 0.5; done
  fi
  redis_up || { echo "error: Redis is not running on 127.0.0.1:6379 and could not be started."; \
                echo "       install it (Debian: apt-get install redis-server) or set CELERY_BROKER_URL."; exit 1; }
fi
echo "PostgreSQL and Redis are up."
