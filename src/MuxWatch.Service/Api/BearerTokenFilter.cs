using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Options;

namespace MuxWatch.Service.Api;

/// <summary>
/// Requires <c>Authorization: Bearer &lt;MuxWatch:Api:BearerToken&gt;</c> on the API when a token is
/// configured. The comparison takes the same time whatever the guess; the token is never logged or echoed.
/// </summary>
internal sealed class BearerTokenFilter(IOptions<ApiOptions> options) : IEndpointFilter
{
    private readonly byte[]? _expected = string.IsNullOrEmpty(options.Value.BearerToken)
        ? null
        : SHA256.HashData(Encoding.UTF8.GetBytes(options.Value.BearerToken));

    public async ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(next);
        if (_expected is null || Presented(context.HttpContext.Request) is { } presented && Matches(presented))
        {
            return await next(context).ConfigureAwait(false);
        }

        context.HttpContext.Response.Headers.WWWAuthenticate = "Bearer realm=\"muxwatch\"";
        var problem = ProblemAnswer.For(StatusCodes.Status401Unauthorized, "this API needs \"Authorization: Bearer <token>\" with the configured MuxWatch:Api:BearerToken");
        return Results.Json(problem, ServiceJson.Options.GetTypeInfo(typeof(ProblemAnswer)), ProblemAnswer.ContentType, StatusCodes.Status401Unauthorized);
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
