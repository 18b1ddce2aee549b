from django.urls import path

from console.api import people, tokens

urlpatterns = [
    path("auth/token/", tokens.TokenLoginApi.as_view(), name="token-login"),
    path("auth/logout/", tokens.TokenLogoutApi.as_view(), name="token-logout"),
    path("auth/logout-all/", tokens.TokenLogoutAllApi.as_view(), name="token-logout-all"),
    path("people/", people.PersonListApi.as_view(), name="person-list"),
    path("people/audit/", people.PeopleAuditApi.as_view(), name="people-audit"),
    path("people/<int:user_id>/", people.PersonDetailApi.as_view(), name="person-detail"),
    path(
        "people/<int:user_id>/invite/",
        people.PersonInviteReissueApi.as_view(),
        name="person-invite-reissue",
    ),
    path("rooms/<int:room_id>/owner/", people.RoomOwnerApi.as_view(), name="room-owner"),
]
