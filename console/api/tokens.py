"""Token login for API clients: username and password in, a token (shown once) out; logout
revokes the token used, logout-all every token of its user.

Login attempts go through django-axes like the console form: after HAT_LOGIN_FAILURE_LIMIT
failures for one (username, address) the pair is refused with a 429 (console/login_lockout.py).
"""

from __future__ import annotations

from django.contrib.auth import authenticate, user_logged_in
from drf_spectacular.utils import OpenApiResponse, extend_schema
from knox.auth import TokenAuthentication
from knox.views import LogoutAllView, LogoutView
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from console.api_errors import FieldErrorsException
from console.api_tokens import TokenLimitReached, api_token_issue


class TokenLoginInput(serializers.Serializer):  # type: ignore[type-arg]
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class TokenOutput(serializers.Serializer):  # type: ignore[type-arg]
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`; shown once.")
    expiry = serializers.DateTimeField()


class TokenLoginApi(APIView):
    # Credentials are the body; a session or an old token must not stand in for them.
    authentication_classes: list[type] = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=TokenLoginInput,
        responses={
            201: TokenOutput,
            400: OpenApiResponse(description="wrong username or password"),
            403: OpenApiResponse(description="the user holds the most tokens allowed"),
            429: OpenApiResponse(description="locked out after too many failed logins"),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        data = TokenLoginInput(data=request.data)
        data.is_valid(raise_exception=True)
        # The Django request: django-axes records the attempt on it and its middleware turns
        # a lockout into the 429.
        http_request = request._request
        user = authenticate(
            request=http_request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None:
            message = "Unable to log in with the given username and password."
            raise FieldErrorsException(message, [{"field": "password", "message": message}])
        try:
            instance, token = api_token_issue(user=user)
        except TokenLimitReached as exc:
            return Response({"detail": str(exc), "errors": []}, status=status.HTTP_403_FORBIDDEN)
        user_logged_in.send(sender=user.__class__, request=http_request, user=user)
        body = TokenOutput({"token": token, "expiry": instance.expiry}).data
        return Response(body, status=status.HTTP_201_CREATED)


class TokenLogoutApi(LogoutView):
    authentication_classes = [TokenAuthentication]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, format: str | None = None) -> Response:
        return super().post(request, format)


class TokenLogoutAllApi(LogoutAllView):
    authentication_classes = [TokenAuthentication]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, format: str | None = None) -> Response:
        return super().post(request, format)
