using System.Security.Cryptography;
using System.Text;
using MuxWatch.AspNetCore;

namespace MuxWatch.Tool.Api;

/// <summary>
/// A configured bearer token and the check of a request against it. The comparison takes the same
/// time whatever the guess; the token is never logged or echoed.
/// </summary>
internal sealed class BearerToken(string? configured)
{
    private readonly byte[]? _expected = string.IsNullOrEmpty(configured) ? null : SHA256.HashData(Encoding.UTF8.GetBytes(configured));

    /// <summary>True when no token is configured, or the request carries it.</summary>
    public bool Admits(HttpRequest request) => _expected is null || Presented(request) is { } presented && Matches(presented);

    /// <summary>Answers 401 with <c>WWW-Authenticate</c> and problem details naming the setting.</summary>
    public static IResult Refuse(HttpContext context, string setting)
    {
        context.Response.Headers.WWWAuthenticate = "Bearer realm=\"muxwatch\"";
        return Problems.Result(StatusCodes.Status401Unauthorized, $"this endpoint needs \"Authorization: Bearer <token>\" with the configured {setting}");
    }

    private static string? Presented(HttpRequest request)
    {
        var header = request.Headers.Authorization.ToString();
        const string scheme = "Bearer ";
        return header.StartsWith(scheme, StringComparison.OrdinalIgnoreCase) ? header[scheme.Length..].Trim() : null;
    }

    // Hashing both sides gives equal lengths, so FixedTimeEquals does not leak the token's length either.
    private bool Matches(string presented) =>
        CryptographicOperations.FixedTimeEquals(SHA256.HashData(Encoding.UTF8.GetBytes(presented)), _expected);
}
