from django.urls import path

from experiments_app.api.live import LiveReplyApi

urlpatterns = [
    path("live/reply", LiveReplyApi.as_view(), name="live-reply"),
]
