using MuxWatch.Service;
using MuxWatch.Service.Commands;

if (args is ["explain", ..])
{
    return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
}

SidecarHosting.PrepareProcess();

// The content root is the app's folder, not the working directory: appsettings.json (port 9401, log
// levels) applies wherever the service is started from.
var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });
builder.AddMuxWatchSidecar();
return await StartupErrors.RunAsync(builder, app => app.MapMuxWatchSidecar());
