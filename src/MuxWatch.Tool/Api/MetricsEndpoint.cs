using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace MuxWatch.Tool.Api;

/// <summary>The sidecar's <c>/metrics</c>: MuxWatch's registry, optionally behind a token and on a port of its own.</summary>
internal static class MetricsEndpoint
{
    public static IServiceCollection AddMetricsEndpoint(this IServiceCollection services)
    {
        services.AddOptions<MetricsOptions>().BindConfiguration(MetricsOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<MetricsOptions>, MetricsOptionsValidator>());
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
