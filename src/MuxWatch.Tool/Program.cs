using MuxWatch.Tool;
using MuxWatch.Tool.Commands;

// muxwatch explain ... | muxwatch serve ... | muxwatch (serve, as the container and `dotnet run` start it)
return await CommandLine.RunAsync(args, Console.In, Console.Out, Console.Error, ServeAsync);

static async Task<int> ServeAsync(string[] settings)
{
    SidecarHosting.PrepareProcess();

    // The content root is the app's folder, not the working directory: appsettings.json (port 9401, log
    // levels) applies wherever the service is started from. The slim builder: what a service of a few endpoints
    // needs (configuration, console logging, Kestrel over HTTP/1.1 and HTTP/2), without HTTP/3, IIS or the other
    // log providers, a native executable 1.3 MB smaller, all of it resident at 500 endpoints (issue 52). HTTPS
    // endpoints configured for Kestrel (the bearer token over a network) are still read.
    var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = settings, ContentRootPath = AppContext.BaseDirectory });
    builder.WebHost.UseKestrelHttpsConfiguration();
    builder.AddMuxWatchSidecar();
    return await StartupErrors.RunAsync(builder, app => app.MapMuxWatchSidecar());
}
