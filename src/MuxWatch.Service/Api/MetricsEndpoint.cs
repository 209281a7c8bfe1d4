using Microsoft.Extensions.Options;

namespace MuxWatch.Service.Api;

/// <summary>The sidecar's <c>/metrics</c>: MuxWatch's registry, optionally behind a token and on a port of its own.</summary>
internal static class MetricsEndpoint
{
    public static IServiceCollection AddMetricsEndpoint(this IServiceCollection services)
    {
        const string section = MetricsOptions.SectionName;
        services.AddOptions<MetricsOptions>()
            .BindConfiguration(section)
            .Validate(o => string.IsNullOrEmpty(o.BearerToken) || (o.BearerToken.Length >= 16 && o.BearerToken.Trim().Length == o.BearerToken.Length),
                $"{section}:{nameof(MetricsOptions.BearerToken)} must be at least 16 characters, without leading or trailing whitespace, when set (its value is not shown).")
            .Validate(o => o.Port is null or (>= 1 and <= 65535), $"{section}:{nameof(MetricsOptions.Port)} must be a port number (1 to 65535).")
            .ValidateOnStart();
        return services;
    }

    public static void MapMetricsEndpoint(this WebApplication app)
    {
        var options = app.Services.GetRequiredService<IOptions<MetricsOptions>>().Value;
        var token = new BearerToken(options.BearerToken);
        app.UseWhen(context => context.Request.Path.StartsWithSegments("/metrics"), branch => branch.Use(async (context, next) =>
        {
            if (token.Admits(context.Request))
            {
                await next(context).ConfigureAwait(false);
            }
            else
            {
                await BearerToken.Refuse(context, $"{MetricsOptions.SectionName}:{nameof(MetricsOptions.BearerToken)}").ExecuteAsync(context).ConfigureAwait(false);
            }
        }));

        var metrics = app.MapMuxWatchMetrics();
        if (options.Port is { } port)
        {
            metrics.RequireHost($"*:{port}");
        }
    }
}
