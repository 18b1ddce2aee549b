from django.urls import path

from console.api import tokens

urlpatterns = [
    path("auth/token/", tokens.TokenLoginApi.as_view(), name="token-login"),
    path("auth/logout/", tokens.TokenLogoutApi.as_view(), name="token-logout"),
    path("auth/logout-all/", tokens.TokenLogoutAllApi.as_view(), name="token-logout-all"),
]
