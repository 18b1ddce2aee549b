"""URLs of the server-rendered operator console (namespace ``console``)."""

from django.urls import include, path

from console.views import (
    api_keys,
    blind_tests,
    datasets,
    diff,
    editor,
    endpoints,
    evals,
    harnesses,
    home,
    hsa_preview,
    judges,
    labeling,
    latency,
    people,
    products,
    publish_gate,
    replies,
    rooms,
    training_runs,
    vendor,
    versions,
    webhook_secrets,
)

app_name = "console"

urlpatterns = [
    path("", home.home, name="home"),
    path("labeling/", labeling.labeling, name="labeling"),
    path("labeling/<str:token>/", labeling.labeling_test, name="labeling-test"),
    # rooms, catalog, API keys
    path("rooms/", rooms.room_list, name="room-list"),
    path("rooms/new/", rooms.room_create, name="room-create"),
    path("rooms/<int:room_id>/", rooms.room_detail, name="room-detail"),
    path("rooms/<int:room_id>/settings/", rooms.room_settings, name="room-settings"),
    path(
        "rooms/<int:room_id>/publish-gate/",
        publish_gate.publish_gate_settings,
        name="publish-gate",
    ),
    path("rooms/<int:room_id>/products/new/", products.product_create, name="product-create"),
    path("rooms/<int:room_id>/products/import/", products.catalog_import, name="catalog-import"),
    path(
        "rooms/<int:room_id>/products/<str:sku>/edit/", products.product_edit, name="product-edit"
    ),
    path(
        "rooms/<int:room_id>/products/<str:sku>/delete/",
        products.product_delete,
        name="product-delete",
    ),
    path("rooms/<int:room_id>/api-keys/new/", api_keys.api_key_create, name="api-key-create"),
    path(
        "rooms/<int:room_id>/api-keys/<int:key_id>/revoke/",
        api_keys.api_key_revoke,
        name="api-key-revoke",
    ),
    # live replies: traces and latency reports
    path(
        "rooms/<int:room_id>/webhook-secrets/new/",
        webhook_secrets.webhook_secret_create,
        name="webhook-secret-create",
    ),
    path(
        "rooms/<int:room_id>/webhook-secrets/<int:secret_id>/rotate/",
        webhook_secrets.webhook_secret_rotate,
        name="webhook-secret-rotate",
    ),
    path(
        "rooms/<int:room_id>/webhook-secrets/<int:secret_id>/delete/",
        webhook_secrets.webhook_secret_delete,
        name="webhook-secret-delete",
    ),
    path("rooms/<int:room_id>/replies/", replies.reply_list, name="reply-list"),
    path("rooms/<int:room_id>/replies/<int:reply_id>/", replies.reply_detail, name="reply-detail"),
    path("rooms/<int:room_id>/latency/", latency.latency_list, name="latency-list"),
    path(
        "rooms/<int:room_id>/latency/<int:report_id>/",
        latency.latency_detail,
        name="latency-detail",
    ),
    path(
        "rooms/<int:room_id>/latency/<int:report_id>/status/",
        latency.latency_status,
        name="latency-status",
    ),
    path(
        "rooms/<int:room_id>/latency/<int:report_id>/cancel/",
        latency.latency_cancel,
        name="latency-cancel",
    ),
    # model endpoints (operators)
    path("endpoints/", endpoints.endpoint_list, name="endpoint-list"),
    path("endpoints/new/", endpoints.endpoint_create, name="endpoint-create"),
    path("endpoints/<int:endpoint_id>/", endpoints.endpoint_edit, name="endpoint-edit"),
    path("endpoints/<int:endpoint_id>/test/", endpoints.endpoint_test, name="endpoint-test"),
    path("vendor/plotly-<str:version>.min.js", vendor.plotly_js, name="plotly-js"),
    # harnesses and versions
    path("harnesses/", harnesses.harness_list, name="harness-list"),
    path("harnesses/<int:harness_id>/", harnesses.harness_detail, name="harness-detail"),
    path("harnesses/<int:harness_id>/edit/", editor.harness_edit, name="harness-edit"),
    path("harnesses/<int:harness_id>/import/", harnesses.harness_import, name="harness-import"),
    path("harnesses/<int:harness_id>/diff/", diff.harness_diff, name="harness-diff"),
    path("harnesses/<int:harness_id>/try/", replies.harness_try, name="harness-try"),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/",
        versions.version_detail,
        name="version-detail",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish/",
        versions.version_publish,
        name="version-publish",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish/check/",
        publish_gate.publish_check_start,
        name="publish-check-start",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish/check/status/",
        publish_gate.publish_check_status,
        name="publish-check-status",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/rollback/",
        versions.version_rollback,
        name="version-rollback",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/export/",
        harnesses.version_export,
        name="version-export",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/hsa/",
        hsa_preview.hsa_preview_page,
        name="hsa-preview",
    ),
    path("training/datasets/", datasets.dataset_list, name="dataset-list"),
    path("training/datasets/<int:dataset_id>/", datasets.dataset_detail, name="dataset-detail"),
    path(
        "training/datasets/<int:dataset_id>/download/",
        datasets.dataset_download,
        name="dataset-download",
    ),
    path("training/jobs/<int:job_id>/", datasets.augmentation_job, name="augmentation-job"),
    path("training/runs/", training_runs.run_list, name="training-run-list"),
    path("training/runs/new/", training_runs.run_create, name="training-run-create"),
    path("training/runs/compare/", training_runs.run_compare, name="training-run-compare"),
    path("training/runs/<int:run_id>/", training_runs.run_detail, name="training-run-detail"),
    path(
        "training/runs/<int:run_id>/cancel/",
        training_runs.run_cancel,
        name="training-run-cancel",
    ),
    path(
        "training/runs/<int:run_id>/start/",
        training_runs.run_start,
        name="training-run-start",
    ),
    path(
        "training/runs/<int:run_id>/resume/",
        training_runs.run_resume,
        name="training-run-resume",
    ),
    path(
        "training/runs/<int:run_id>/endpoint/",
        training_runs.run_register_endpoint,
        name="training-run-endpoint",
    ),
    path(
        "training/runs/<int:run_id>/config.yaml",
        training_runs.run_config_yaml,
        name="training-run-config",
    ),
    path(
        "training/jobs/<int:job_id>/cancel/",
        datasets.augmentation_job_cancel,
        name="augmentation-job-cancel",
    ),
    # Agent-as-a-Judge
    path("judges/", judges.judge_list, name="judge-list"),
    path("judges/new/", judges.judge_create, name="judge-create"),
    path("judges/<int:judge_id>/", judges.judge_detail, name="judge-detail"),
    path("judges/<int:judge_id>/edit/", judges.judge_edit, name="judge-edit"),
    path("judges/<int:judge_id>/calibrate/", judges.judge_calibrate, name="judge-calibrate"),
    # offline evaluation
    path("evaluation/", evals.eval_set_list, name="eval-set-list"),
    path("evaluation/sets/<int:eval_set_id>/", evals.eval_set_detail, name="eval-set-detail"),
    path("evaluation/runs/new/", evals.eval_run_create, name="eval-run-create"),
    path("evaluation/runs/<int:run_id>/", evals.eval_run_detail, name="eval-run-detail"),
    path("evaluation/runs/<int:run_id>/status/", evals.eval_run_status, name="eval-run-status"),
    path("evaluation/runs/<int:run_id>/cancel/", evals.eval_run_cancel, name="eval-run-cancel"),
    path("evaluation/score-table/", evals.eval_score_table, name="eval-score-table"),
    path("evaluation/compare/", evals.eval_compare, name="eval-compare"),
    # blind tests (operators; docs/BLIND_TESTS.md)
    path("blind-tests/", blind_tests.blind_test_list, name="blind-test-list"),
    path("blind-tests/new/", blind_tests.blind_test_create, name="blind-test-create"),
    path("blind-tests/labelers/", blind_tests.labeler_list, name="blind-test-labelers"),
    path("blind-tests/<int:test_id>/", blind_tests.blind_test_detail, name="blind-test-detail"),
    path(
        "blind-tests/<int:test_id>/status/",
        blind_tests.blind_test_status,
        name="blind-test-status",
    ),
    path(
        "blind-tests/<int:test_id>/labels.csv",
        blind_tests.blind_test_labels_csv,
        name="blind-test-labels-csv",
    ),
    path(
        "blind-tests/<int:test_id>/labelers/",
        blind_tests.blind_test_assign,
        name="blind-test-assign",
    ),
    path(
        "blind-tests/<int:test_id>/labelers/<int:labeler_id>/remove/",
        blind_tests.blind_test_unassign,
        name="blind-test-unassign",
    ),
    path("blind-tests/<int:test_id>/close/", blind_tests.blind_test_close, name="blind-test-close"),
    path("blind-tests/<int:test_id>/open/", blind_tests.blind_test_open, name="blind-test-open"),
    path(
        "set-password/<uidb64>/<token>/",
        blind_tests.SetPasswordView.as_view(),
        name="set-password",
    ),
    # people (operators; the invite link is public, its token is the key)
    path("people/", people.people_list, name="people-list"),
    path("people/room-owner/", people.room_owner_assign, name="people-room-owner"),
    path("people/<int:user_id>/", people.person_detail, name="person-detail"),
    path("people/<int:user_id>/role/", people.person_role_change, name="person-role"),
    path("people/<int:user_id>/deactivate/", people.person_deactivate, name="person-deactivate"),
    path("people/<int:user_id>/reactivate/", people.person_reactivate, name="person-reactivate"),
    path("people/<int:user_id>/invite/", people.person_invite_reissue, name="person-invite"),
    path("invite/<str:token>/", people.invite_accept, name="invite-accept"),
    # A/B experiments
    path("", include("console.views.experiment_urls")),
]
