using Microsoft.Extensions.Options;

namespace MuxWatch.Tool.Api;

/// <summary>Requires <c>Authorization: Bearer &lt;MuxWatch:Api:BearerToken&gt;</c> on the API when a token is configured.</summary>
internal sealed class BearerTokenFilter(IOptions<ApiOptions> options) : IEndpointFilter
{
    private readonly BearerToken _token = new(options.Value.BearerToken);

    public async ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(next);
        return _token.Admits(context.HttpContext.Request)
            ? await next(context).ConfigureAwait(false)
            : BearerToken.Refuse(context.HttpContext, "MuxWatch:Api:BearerToken");
    }
}
