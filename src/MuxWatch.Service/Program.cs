using MuxWatch.Service.Api;
using MuxWatch.Service.Commands;

if (args.Length > 0 && args[0] == "explain")
{
    return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
}

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddMuxWatch();
builder.Services.AddTimeoutsApi();

var app = builder.Build();
app.MapHealth();
app.MapTimeoutsApi();
await app.RunAsync();
return 0;
